ALTER TABLE `applications` ADD `verify_key` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `signing_key` text;