ALTER TABLE "gateway_outbox" ADD COLUMN "part" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "gateway_outbox" ADD COLUMN "parts" text COLLATE "C" DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX "gateway_outbox_part" ON "gateway_outbox" USING btree ("part","id");