ALTER TABLE `gateway_outbox` ADD `part` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `gateway_outbox` ADD `parts` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `gateway_outbox_part` ON `gateway_outbox` (`part`,`id`);