ALTER TABLE `applications` ADD `first_party` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_tokens` ADD `session_id` text REFERENCES auth_sessions(id) ON DELETE cascade;--> statement-breakpoint
CREATE INDEX `oauth2_tokens_session_idx` ON `oauth2_tokens` (`session_id`);