CREATE TABLE `application_commands` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`guild_id` text,
	`type` integer NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`options` text DEFAULT '[]' NOT NULL,
	`default_member_permissions` text,
	`dm_permission` integer DEFAULT true NOT NULL,
	`nsfw` integer DEFAULT false NOT NULL,
	`name_localizations` text,
	`description_localizations` text,
	`version` text NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`guild_id`) REFERENCES `guilds`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `application_commands_scope_idx` ON `application_commands` (`application_id`,`guild_id`);