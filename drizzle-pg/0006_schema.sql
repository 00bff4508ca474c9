ALTER TABLE "guild_roles" ADD COLUMN "bot_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "oauth2_codes" ADD COLUMN "guild_id" text COLLATE "C";