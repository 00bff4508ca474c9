CREATE TABLE `presences` (
	`user_id` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`activities` text DEFAULT '[]' NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `relationships` (
	`user_id` text NOT NULL,
	`other_id` text NOT NULL,
	`type` integer NOT NULL,
	`nickname` text,
	`since` integer NOT NULL,
	PRIMARY KEY(`user_id`, `other_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`other_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `relationships_user_type_idx` ON `relationships` (`user_id`,`type`);--> statement-breakpoint
CREATE INDEX `relationships_other_idx` ON `relationships` (`other_id`);