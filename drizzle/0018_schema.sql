CREATE TABLE `admin_audit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` integer NOT NULL,
	`actor_id` text,
	`actor_name` text NOT NULL,
	`action` text NOT NULL,
	`target_type` text,
	`target_id` text,
	`reason` text,
	`address` text,
	`details` text
);
--> statement-breakpoint
CREATE INDEX `admin_audit_action_idx` ON `admin_audit` (`action`,`id`);--> statement-breakpoint
CREATE INDEX `admin_audit_target_idx` ON `admin_audit` (`target_id`,`id`);--> statement-breakpoint
CREATE INDEX `admin_audit_actor_idx` ON `admin_audit` (`actor_id`,`id`);--> statement-breakpoint
CREATE TABLE `operators` (
	`user_id` text PRIMARY KEY NOT NULL,
	`granted_at` integer NOT NULL,
	`granted_by` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
