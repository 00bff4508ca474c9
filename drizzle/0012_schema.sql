CREATE TABLE `guild_bans` (
	`guild_id` text NOT NULL,
	`user_id` text NOT NULL,
	`reason` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`guild_id`, `user_id`),
	FOREIGN KEY (`guild_id`) REFERENCES `guilds`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `guild_members` ADD `communication_disabled_until` integer;--> statement-breakpoint
ALTER TABLE `channel_messages` ADD `reference_id` text;--> statement-breakpoint
ALTER TABLE `channel_messages` ADD `mentions` text DEFAULT '{"users":[],"roles":[],"everyone":false}' NOT NULL;