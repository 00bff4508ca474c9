CREATE TABLE `game_invites` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`sender_id` text NOT NULL,
	`recipient_id` text NOT NULL,
	`type` integer NOT NULL,
	`activity` text,
	`content` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`sender_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`recipient_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `game_invites_recipient_idx` ON `game_invites` (`recipient_id`);--> statement-breakpoint
CREATE INDEX `game_invites_sender_idx` ON `game_invites` (`sender_id`);--> statement-breakpoint
CREATE TABLE `game_relationships` (
	`user_id` text NOT NULL,
	`other_id` text NOT NULL,
	`application_id` text NOT NULL,
	`type` integer NOT NULL,
	`since` integer NOT NULL,
	PRIMARY KEY(`user_id`, `application_id`, `other_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`other_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `game_relationships_other_idx` ON `game_relationships` (`other_id`);