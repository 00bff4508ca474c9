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