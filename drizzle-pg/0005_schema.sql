ALTER TABLE "lobby_event_deliveries" ADD COLUMN "failing_since" bigint;--> statement-breakpoint
ALTER TABLE "lobby_event_deliveries" ADD COLUMN "claimed_by" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "lobby_event_deliveries" ADD COLUMN "claimed_until" bigint;