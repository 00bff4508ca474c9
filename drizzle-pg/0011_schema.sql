ALTER TABLE "applications" ADD COLUMN "first_party" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oauth2_tokens" ADD COLUMN "session_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "oauth2_tokens" ADD CONSTRAINT "oauth2_tokens_session_id_auth_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."auth_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oauth2_tokens_session_idx" ON "oauth2_tokens" USING btree ("session_id");