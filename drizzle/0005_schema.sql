DROP INDEX `channel_messages_channel_idx`;--> statement-breakpoint
CREATE INDEX `channel_messages_channel_order_idx` ON `channel_messages` (`channel_id`,CAST("id" AS INTEGER));--> statement-breakpoint
DROP INDEX `lobby_messages_lobby_idx`;--> statement-breakpoint
CREATE INDEX `lobby_messages_lobby_order_idx` ON `lobby_messages` (`lobby_id`,CAST("id" AS INTEGER));--> statement-breakpoint
ALTER TABLE `users` ADD `password_weak` integer;