CREATE TABLE `auth_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`id_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer NOT NULL,
	`ip` text,
	`client_os` text,
	`client_platform` text,
	`client_location` text,
	`login_source` text,
	`gift_code_sku_id` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `auth_sessions_tokenHash_unique` ON `auth_sessions` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `auth_sessions_idHash_unique` ON `auth_sessions` (`id_hash`);--> statement-breakpoint
CREATE INDEX `auth_sessions_user_idx` ON `auth_sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `blocked_phones` (
	`phone` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `fingerprints` (
	`id` text PRIMARY KEY NOT NULL,
	`valid` integer NOT NULL,
	`ip` text NOT NULL,
	`created_at` integer NOT NULL,
	`used_by` text
);
--> statement-breakpoint
CREATE TABLE `known_ips` (
	`user_id` text NOT NULL,
	`ip` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `ip`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `one_time_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`purpose` text NOT NULL,
	`user_id` text,
	`data` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `one_time_tokens_user_idx` ON `one_time_tokens` (`user_id`,`purpose`);--> statement-breakpoint
CREATE TABLE `phone_codes` (
	`phone` text NOT NULL,
	`purpose` text NOT NULL,
	`code_hash` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`phone`, `purpose`)
);
--> statement-breakpoint
CREATE TABLE `push_devices` (
	`session_id` text NOT NULL,
	`provider` text NOT NULL,
	`token` text NOT NULL,
	`voip_provider` text,
	`voip_token` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `provider`, `token`),
	FOREIGN KEY (`session_id`) REFERENCES `auth_sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `server_secrets` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`channel` text NOT NULL,
	`to` text NOT NULL,
	`subject` text,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `outbox_to_idx` ON `outbox` (`to`);--> statement-breakpoint
CREATE TABLE `channels` (
	`id` text PRIMARY KEY NOT NULL,
	`guild_id` text NOT NULL,
	`type` integer NOT NULL,
	`name` text NOT NULL,
	`topic` text,
	`position` integer DEFAULT 0 NOT NULL,
	`nsfw` integer DEFAULT false NOT NULL,
	`last_message_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`guild_id`) REFERENCES `guilds`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `channels_guild_idx` ON `channels` (`guild_id`);--> statement-breakpoint
CREATE TABLE `guilds` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`owner_id` text NOT NULL,
	`features` text DEFAULT '[]' NOT NULL,
	`vanity_url_code` text,
	`hub_type` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `guilds_vanityUrlCode_unique` ON `guilds` (`vanity_url_code`);--> statement-breakpoint
CREATE TABLE `invites` (
	`code` text PRIMARY KEY NOT NULL,
	`guild_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`inviter_id` text,
	`target_user_id` text,
	`max_age` integer NOT NULL,
	`max_uses` integer NOT NULL,
	`uses` integer DEFAULT 0 NOT NULL,
	`temporary` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	FOREIGN KEY (`guild_id`) REFERENCES `guilds`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`channel_id`) REFERENCES `channels`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`inviter_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `invites_channel_idx` ON `invites` (`channel_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `invites_code_idx` ON `invites` (`code`);--> statement-breakpoint
CREATE TABLE `guild_member_roles` (
	`guild_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role_id` text NOT NULL,
	PRIMARY KEY(`guild_id`, `user_id`, `role_id`),
	FOREIGN KEY (`role_id`) REFERENCES `guild_roles`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `guild_member_roles_role_idx` ON `guild_member_roles` (`role_id`);--> statement-breakpoint
CREATE TABLE `guild_members` (
	`guild_id` text NOT NULL,
	`user_id` text NOT NULL,
	`nick` text,
	`joined_at` integer NOT NULL,
	PRIMARY KEY(`guild_id`, `user_id`),
	FOREIGN KEY (`guild_id`) REFERENCES `guilds`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `guild_members_user_idx` ON `guild_members` (`user_id`);--> statement-breakpoint
CREATE TABLE `channel_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`channel_id` text NOT NULL,
	`author_id` text NOT NULL,
	`content` text NOT NULL,
	`nonce` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`channel_id`) REFERENCES `channels`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`author_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `channel_messages_channel_idx` ON `channel_messages` (`channel_id`,`id`);--> statement-breakpoint
CREATE TABLE `guild_roles` (
	`id` text PRIMARY KEY NOT NULL,
	`guild_id` text NOT NULL,
	`name` text NOT NULL,
	`permissions` text NOT NULL,
	`position` integer NOT NULL,
	`color` integer DEFAULT 0 NOT NULL,
	`hoist` integer DEFAULT false NOT NULL,
	`mentionable` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`guild_id`) REFERENCES `guilds`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `guild_roles_guild_idx` ON `guild_roles` (`guild_id`);--> statement-breakpoint
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
CREATE TABLE `applications` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`owner_id` text,
	`bot_user_id` text NOT NULL,
	`bot_token_hash` text NOT NULL,
	`client_secret_hash` text NOT NULL,
	`redirect_uris` text DEFAULT '[]' NOT NULL,
	`flags` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`bot_user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `applications_botTokenHash_unique` ON `applications` (`bot_token_hash`);--> statement-breakpoint
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
CREATE TABLE `oauth2_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scopes` text NOT NULL,
	`access_token_hash` text NOT NULL,
	`refresh_token_hash` text,
	`family_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`refresh_expires_at` integer,
	`refresh_used_at` integer,
	`public_client` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_tokens_accessTokenHash_unique` ON `oauth2_tokens` (`access_token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_tokens_refreshTokenHash_unique` ON `oauth2_tokens` (`refresh_token_hash`);--> statement-breakpoint
CREATE INDEX `oauth2_tokens_family_idx` ON `oauth2_tokens` (`family_id`);--> statement-breakpoint
CREATE INDEX `oauth2_tokens_user_app_idx` ON `oauth2_tokens` (`user_id`,`application_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`global_name` text,
	`discriminator` text DEFAULT '0' NOT NULL,
	`avatar` text,
	`email` text,
	`email_verified` integer DEFAULT false NOT NULL,
	`phone` text,
	`password_hash` text,
	`bot` integer DEFAULT false NOT NULL,
	`flags` integer DEFAULT 0 NOT NULL,
	`locale` text DEFAULT 'en-US' NOT NULL,
	`theme` text DEFAULT 'dark' NOT NULL,
	`date_of_birth` text,
	`state` text DEFAULT 'active' NOT NULL,
	`compromised` integer DEFAULT false NOT NULL,
	`promotional_email_opt_in` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_phone_unique` ON `users` (`phone`);