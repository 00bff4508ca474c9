CREATE TABLE `lobby_event_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`lobby_id` text NOT NULL,
	`application_id` text NOT NULL,
	`body` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`lobby_id`) REFERENCES `lobbies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lobby_event_deliveries_lobby_idx` ON `lobby_event_deliveries` (`lobby_id`,`id`);--> statement-breakpoint
ALTER TABLE `applications` ADD `event_webhooks_url` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `event_webhooks_status` integer DEFAULT 1 NOT NULL;