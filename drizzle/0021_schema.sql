CREATE TABLE `dm_channels` (
	`channel_id` text PRIMARY KEY NOT NULL,
	`low_user_id` text NOT NULL,
	`high_user_id` text NOT NULL,
	FOREIGN KEY (`channel_id`) REFERENCES `channels`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`low_user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`high_user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dm_channels_pair_idx` ON `dm_channels` (`low_user_id`,`high_user_id`);--> statement-breakpoint
CREATE INDEX `dm_channels_high_idx` ON `dm_channels` (`high_user_id`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_channels` (
	`id` text PRIMARY KEY NOT NULL,
	`guild_id` text,
	`type` integer NOT NULL,
	`name` text NOT NULL,
	`topic` text,
	`position` integer DEFAULT 0 NOT NULL,
	`nsfw` integer DEFAULT false NOT NULL,
	`last_message_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`guild_id`) REFERENCES `guilds`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_channels`("id", "guild_id", "type", "name", "topic", "position", "nsfw", "last_message_id", "created_at") SELECT "id", "guild_id", "type", "name", "topic", "position", "nsfw", "last_message_id", "created_at" FROM `channels`;--> statement-breakpoint
DROP TABLE `channels`;--> statement-breakpoint
ALTER TABLE `__new_channels` RENAME TO `channels`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `channels_guild_idx` ON `channels` (`guild_id`);