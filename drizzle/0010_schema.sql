CREATE TABLE `channel_message_reactions` (
	`message_id` text NOT NULL,
	`emoji` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`message_id`, `emoji`, `user_id`),
	FOREIGN KEY (`message_id`) REFERENCES `channel_messages`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `channel_message_reactions_user_idx` ON `channel_message_reactions` (`user_id`);--> statement-breakpoint
ALTER TABLE `channel_messages` ADD `edited_at` integer;--> statement-breakpoint
ALTER TABLE `channel_messages` ADD `embeds` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `channel_messages` ADD `pinned_at` integer;--> statement-breakpoint
CREATE INDEX `channel_messages_pins_idx` ON `channel_messages` (`channel_id`,`pinned_at`) WHERE "channel_messages"."pinned_at" IS NOT NULL;