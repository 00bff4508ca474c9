CREATE TABLE "presences" (
	"user_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"activities" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "presences" ADD CONSTRAINT "presences_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;