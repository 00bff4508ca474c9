CREATE TABLE "dm_channels" (
	"channel_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"low_user_id" text COLLATE "C" NOT NULL,
	"high_user_id" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "channels" ALTER COLUMN "guild_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "dm_channels" ADD CONSTRAINT "dm_channels_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dm_channels" ADD CONSTRAINT "dm_channels_low_user_id_users_id_fk" FOREIGN KEY ("low_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dm_channels" ADD CONSTRAINT "dm_channels_high_user_id_users_id_fk" FOREIGN KEY ("high_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "dm_channels_pair_idx" ON "dm_channels" USING btree ("low_user_id","high_user_id");--> statement-breakpoint
CREATE INDEX "dm_channels_high_idx" ON "dm_channels" USING btree ("high_user_id");