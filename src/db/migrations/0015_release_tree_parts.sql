CREATE TABLE "release_tree_parts" (
	"release_id" uuid NOT NULL,
	"part" integer NOT NULL,
	"files" jsonb NOT NULL,
	CONSTRAINT "release_tree_parts_release_id_part_pk" PRIMARY KEY("release_id","part")
);
--> statement-breakpoint
ALTER TABLE "release_tree_parts" ADD CONSTRAINT "release_tree_parts_release_id_releases_id_fk" FOREIGN KEY ("release_id") REFERENCES "public"."releases"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Trees recorded inside `computed` move to their parts, 1,000 files each, in tree order.
INSERT INTO "release_tree_parts" ("release_id", "part", "files")
SELECT r."id", (f.ord - 1) / 1000, jsonb_agg(f.file ORDER BY f.ord)
FROM "releases" r, jsonb_array_elements(r."computed" -> 'tree') WITH ORDINALITY AS f(file, ord)
WHERE jsonb_typeof(r."computed" -> 'tree') = 'array'
GROUP BY r."id", (f.ord - 1) / 1000;--> statement-breakpoint
UPDATE "releases" SET "computed" = "computed" - 'tree' WHERE "computed" -> 'tree' IS NOT NULL;
