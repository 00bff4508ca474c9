CREATE TABLE `gateway_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` text NOT NULL,
	`entry` text NOT NULL,
	`created_at` integer NOT NULL
);
