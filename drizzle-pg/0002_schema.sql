CREATE TABLE "application_commands" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"application_id" text COLLATE "C" NOT NULL,
	"guild_id" text COLLATE "C",
	"type" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"description" text COLLATE "C" NOT NULL,
	"options" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"default_member_permissions" text COLLATE "C",
	"dm_permission" boolean DEFAULT true NOT NULL,
	"nsfw" boolean DEFAULT false NOT NULL,
	"name_localizations" text COLLATE "C",
	"description_localizations" text COLLATE "C",
	"version" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "application_commands" ADD CONSTRAINT "application_commands_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "application_commands" ADD CONSTRAINT "application_commands_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "application_commands_scope_idx" ON "application_commands" USING btree ("application_id","guild_id");