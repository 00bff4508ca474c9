ALTER TABLE `lobbies` ADD `created_via` text DEFAULT 'put' NOT NULL;--> statement-breakpoint
ALTER TABLE `lobby_messages` ADD `tts` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `lobby_messages` ADD `nonce` text;--> statement-breakpoint
ALTER TABLE `lobby_messages` ADD `enforce_nonce` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `lobby_messages_enforced_nonce_unique` ON `lobby_messages` (`lobby_id`,`author_id`,`nonce`) WHERE "lobby_messages"."enforce_nonce" = 1;