CREATE TABLE "game_relationships" (
	"user_id" text COLLATE "C" NOT NULL,
	"other_id" text COLLATE "C" NOT NULL,
	"application_id" text COLLATE "C" NOT NULL,
	"type" integer NOT NULL,
	"since" bigint NOT NULL,
	CONSTRAINT "game_relationships_user_id_application_id_other_id_pk" PRIMARY KEY("user_id","application_id","other_id")
);
--> statement-breakpoint
CREATE TABLE "game_invites" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"application_id" text COLLATE "C" NOT NULL,
	"sender_id" text COLLATE "C" NOT NULL,
	"recipient_id" text COLLATE "C" NOT NULL,
	"type" integer NOT NULL,
	"activity" text COLLATE "C",
	"content" text COLLATE "C" DEFAULT '' NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "game_relationships" ADD CONSTRAINT "game_relationships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_relationships" ADD CONSTRAINT "game_relationships_other_id_users_id_fk" FOREIGN KEY ("other_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_invites" ADD CONSTRAINT "game_invites_sender_id_users_id_fk" FOREIGN KEY ("sender_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_invites" ADD CONSTRAINT "game_invites_recipient_id_users_id_fk" FOREIGN KEY ("recipient_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "game_relationships_other_idx" ON "game_relationships" USING btree ("other_id");--> statement-breakpoint
CREATE INDEX "game_invites_recipient_idx" ON "game_invites" USING btree ("recipient_id");--> statement-breakpoint
CREATE INDEX "game_invites_sender_idx" ON "game_invites" USING btree ("sender_id");