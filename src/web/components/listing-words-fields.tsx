/**
 * The description and trigger hint, as the new-listing and edit forms both ask for them. `idPrefix`
 * keeps ids unique when both forms could share a page.
 */
export function ListingWordsFields(props: {
  idPrefix: string;
  description: string;
  hint: string;
  descriptionHelp: string;
  onDescription: (value: string) => void;
  onHint: (value: string) => void;
}) {
  const description = `${props.idPrefix}description`;
  const hint = `${props.idPrefix}hint`;
  return (
    <>
      <label for={description}>Description</label>
      <textarea
        id={description}
        rows={3}
        maxLength={5000}
        aria-describedby={`${description}-help`}
        value={props.description}
        onInput={(e) => props.onDescription(e.currentTarget.value)}
      />
      <p id={`${description}-help`} class="muted small">
        {props.descriptionHelp}
      </p>
      <label for={hint}>When should an agent use it?</label>
      <input
        id={hint}
        maxLength={1000}
        aria-describedby={`${hint}-help`}
        value={props.hint}
        onInput={(e) => props.onHint(e.currentTarget.value)}
      />
      <p id={`${hint}-help`} class="muted small">
        One sentence an agent matches its task against. Needed before publishing.
      </p>
    </>
  );
}
