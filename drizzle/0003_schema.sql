CREATE TABLE `experiment_definitions` (
	`name` text PRIMARY KEY NOT NULL,
	`position` integer NOT NULL,
	`definition` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `experiment_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	`loaded_at` integer NOT NULL
);
