CREATE TABLE `lobbies` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`metadata` text,
	`flags` integer DEFAULT 0 NOT NULL,
	`idle_timeout_seconds` integer NOT NULL,
	`secret_hash` text,
	`secret_expires_at` integer,
	`linked_channel_id` text,
	`linked_by` text,
	`linked_at` integer,
	`idle_deadline` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lobbies_linkedChannelId_unique` ON `lobbies` (`linked_channel_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `lobbies_app_secret_unique` ON `lobbies` (`application_id`,`secret_hash`);--> statement-breakpoint
CREATE INDEX `lobbies_idle_deadline_idx` ON `lobbies` (`idle_deadline`);--> statement-breakpoint
CREATE TABLE `lobby_members` (
	`lobby_id` text NOT NULL,
	`user_id` text NOT NULL,
	`application_id` text NOT NULL,
	`metadata` text,
	`flags` integer DEFAULT 0 NOT NULL,
	`voice_session_id` text,
	`self_mute` integer DEFAULT false NOT NULL,
	`self_deaf` integer DEFAULT false NOT NULL,
	`joined_at` integer NOT NULL,
	PRIMARY KEY(`lobby_id`, `user_id`),
	FOREIGN KEY (`lobby_id`) REFERENCES `lobbies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lobby_members_user_app_idx` ON `lobby_members` (`user_id`,`application_id`);--> statement-breakpoint
CREATE INDEX `lobby_members_voice_session_idx` ON `lobby_members` (`voice_session_id`);--> statement-breakpoint
CREATE TABLE `lobby_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`lobby_id` text NOT NULL,
	`application_id` text NOT NULL,
	`author_id` text NOT NULL,
	`content` text NOT NULL,
	`metadata` text,
	`flags` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`lobby_id`) REFERENCES `lobbies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`author_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lobby_messages_lobby_idx` ON `lobby_messages` (`lobby_id`,`id`);--> statement-breakpoint
CREATE TABLE `oauth2_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scopes` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`redirect_uri_given` integer NOT NULL,
	`code_challenge` text,
	`family_id` text NOT NULL,
	`used_at` integer,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth2_codes_expires_idx` ON `oauth2_codes` (`expires_at`);--> statement-breakpoint
ALTER TABLE `oauth2_tokens` ADD `refresh_expires_at` integer;--> statement-breakpoint
ALTER TABLE `oauth2_tokens` ADD `refresh_used_at` integer;--> statement-breakpoint
ALTER TABLE `oauth2_tokens` ADD `public_client` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `oauth2_tokens_user_app_idx` ON `oauth2_tokens` (`user_id`,`application_id`);