CREATE TABLE "attestation_keys" (
	"keyid" text PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"not_before" timestamp with time zone NOT NULL,
	"not_after" timestamp with time zone,
	CONSTRAINT "attestation_keys_window" CHECK ("attestation_keys"."not_after" is null or "attestation_keys"."not_after" >= "attestation_keys"."not_before")
);
--> statement-breakpoint
CREATE TABLE "release_attestations" (
	"release_id" uuid PRIMARY KEY NOT NULL,
	"payload_type" text NOT NULL,
	"payload" text NOT NULL,
	"signatures" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "release_attestations" ADD CONSTRAINT "release_attestations_release_id_releases_id_fk" FOREIGN KEY ("release_id") REFERENCES "public"."releases"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- An attestation is immutable: its statement never changes and a signature, once given, stays.
CREATE FUNCTION "release_attestations_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'release attestations are never deleted';
  END IF;
  IF NEW.release_id IS DISTINCT FROM OLD.release_id
    OR NEW.payload_type IS DISTINCT FROM OLD.payload_type
    OR NEW.payload IS DISTINCT FROM OLD.payload
    OR NOT (NEW.signatures @> OLD.signatures) THEN
    RAISE EXCEPTION 'a release attestation only ever gains signatures';
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "release_attestations_append_only" BEFORE UPDATE OR DELETE ON "release_attestations"
  FOR EACH ROW EXECUTE FUNCTION "release_attestations_append_only"();
