CREATE TABLE `remote_auth_desktops` (
	`fingerprint` text PRIMARY KEY NOT NULL,
	`public_key` text NOT NULL,
	`ip` text NOT NULL,
	`client_os` text,
	`client_platform` text,
	`client_location` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`user_id` text,
	`handshake_hash` text,
	`claimed_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `remote_auth_desktops_handshakeHash_unique` ON `remote_auth_desktops` (`handshake_hash`);--> statement-breakpoint
CREATE INDEX `remote_auth_desktops_expires_idx` ON `remote_auth_desktops` (`expires_at`);--> statement-breakpoint
CREATE TABLE `remote_auth_tickets` (
	`ticket_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`public_key` text NOT NULL,
	`ip` text NOT NULL,
	`client_os` text,
	`client_platform` text,
	`client_location` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `remote_auth_tickets_expires_idx` ON `remote_auth_tickets` (`expires_at`);