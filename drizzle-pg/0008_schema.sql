CREATE TABLE "external_auth_providers" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"application_id" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"issuer" text COLLATE "C" NOT NULL,
	"audience" text COLLATE "C" NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "external_identities" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"application_id" text COLLATE "C" NOT NULL,
	"kind" text COLLATE "C" NOT NULL,
	"issuer" text COLLATE "C" NOT NULL,
	"subject" text COLLATE "C" NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "locked_at" bigint;--> statement-breakpoint
ALTER TABLE "external_auth_providers" ADD CONSTRAINT "external_auth_providers_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "external_identities" ADD CONSTRAINT "external_identities_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "external_identities" ADD CONSTRAINT "external_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "external_auth_providers_app_issuer" ON "external_auth_providers" USING btree ("application_id","issuer");--> statement-breakpoint
CREATE UNIQUE INDEX "external_identities_key" ON "external_identities" USING btree ("application_id","kind","issuer","subject");--> statement-breakpoint
CREATE INDEX "external_identities_user_idx" ON "external_identities" USING btree ("user_id");