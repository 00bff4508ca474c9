ALTER TABLE `guild_roles` ADD `bot_id` text;--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `guild_id` text;