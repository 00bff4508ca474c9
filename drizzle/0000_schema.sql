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
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `auth_sessions_tokenHash_unique` ON `auth_sessions` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `auth_sessions_idHash_unique` ON `auth_sessions` (`id_hash`);--> statement-breakpoint
CREATE INDEX `auth_sessions_user_idx` ON `auth_sessions` (`user_id`);--> statement-breakpoint
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
CREATE TABLE `oauth2_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scopes` text NOT NULL,
	`access_token_hash` text NOT NULL,
	`refresh_token_hash` text,
	`family_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_tokens_accessTokenHash_unique` ON `oauth2_tokens` (`access_token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_tokens_refreshTokenHash_unique` ON `oauth2_tokens` (`refresh_token_hash`);--> statement-breakpoint
CREATE INDEX `oauth2_tokens_family_idx` ON `oauth2_tokens` (`family_id`);--> statement-breakpoint
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
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_phone_unique` ON `users` (`phone`);