ALTER TABLE `lobby_event_deliveries` ADD `failing_since` integer;--> statement-breakpoint
ALTER TABLE `lobby_event_deliveries` ADD `claimed_by` text;--> statement-breakpoint
ALTER TABLE `lobby_event_deliveries` ADD `claimed_until` integer;