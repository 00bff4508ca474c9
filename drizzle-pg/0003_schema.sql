CREATE TABLE "guild_bans" (
	"guild_id" text COLLATE "C" NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"reason" text COLLATE "C",
	"created_at" bigint NOT NULL,
	CONSTRAINT "guild_bans_guild_id_user_id_pk" PRIMARY KEY("guild_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "guild_members" ADD COLUMN "communication_disabled_until" bigint;--> statement-breakpoint
ALTER TABLE "channel_messages" ADD COLUMN "reference_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "channel_messages" ADD COLUMN "mentions" text COLLATE "C" DEFAULT '{"users":[],"roles":[],"everyone":false}' NOT NULL;--> statement-breakpoint
ALTER TABLE "guild_bans" ADD CONSTRAINT "guild_bans_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "guild_bans" ADD CONSTRAINT "guild_bans_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;