CREATE TABLE "channel_message_reactions" (
	"message_id" text COLLATE "C" NOT NULL,
	"emoji" text COLLATE "C" NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "channel_message_reactions_message_id_emoji_user_id_pk" PRIMARY KEY("message_id","emoji","user_id")
);
--> statement-breakpoint
ALTER TABLE "channel_messages" ADD COLUMN "edited_at" bigint;--> statement-breakpoint
ALTER TABLE "channel_messages" ADD COLUMN "embeds" text COLLATE "C" DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE "channel_messages" ADD COLUMN "pinned_at" bigint;--> statement-breakpoint
ALTER TABLE "channel_message_reactions" ADD CONSTRAINT "channel_message_reactions_message_id_channel_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."channel_messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channel_message_reactions" ADD CONSTRAINT "channel_message_reactions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "channel_message_reactions_user_idx" ON "channel_message_reactions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "channel_messages_pins_idx" ON "channel_messages" USING btree ("channel_id","pinned_at") WHERE "channel_messages"."pinned_at" IS NOT NULL;