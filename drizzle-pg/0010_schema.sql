CREATE TABLE "relationships" (
	"user_id" text COLLATE "C" NOT NULL,
	"other_id" text COLLATE "C" NOT NULL,
	"type" integer NOT NULL,
	"nickname" text COLLATE "C",
	"since" bigint NOT NULL,
	CONSTRAINT "relationships_user_id_other_id_pk" PRIMARY KEY("user_id","other_id")
);
--> statement-breakpoint
CREATE TABLE "presences" (
	"user_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"activities" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "relationships" ADD CONSTRAINT "relationships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationships" ADD CONSTRAINT "relationships_other_id_users_id_fk" FOREIGN KEY ("other_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presences" ADD CONSTRAINT "presences_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "relationships_user_type_idx" ON "relationships" USING btree ("user_id","type");--> statement-breakpoint
CREATE INDEX "relationships_other_idx" ON "relationships" USING btree ("other_id");