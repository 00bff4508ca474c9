ALTER TABLE `lobby_messages` ADD `moderation_metadata` text;--> statement-breakpoint
ALTER TABLE `lobby_messages` ADD `edited_at` integer;--> statement-breakpoint
ALTER TABLE `lobby_messages` ADD `channel_message_id` text;