import { FieldError, type FormErrors } from './form-errors.js';

/** What the service takes, in characters (SPEC: both are shown to buyers and agents). */
export const DESCRIPTION_MAX = 5000;
export const HINT_MAX = 1000;

/** The reasons the description and hint are refused before sending: too long, said with the count. */
export function wordsProblems(
  idPrefix: string,
  words: { description: string; hint: string },
): Record<string, string> {
  const problems: Record<string, string> = {};
  if (words.description.length > DESCRIPTION_MAX) {
    problems[`${idPrefix}description`] =
      `The description is ${count(words.description.length)} characters; at most ${count(DESCRIPTION_MAX)}. Shorten it.`;
  }
  if (words.hint.length > HINT_MAX) {
    problems[`${idPrefix}hint`] =
      `The hint is ${count(words.hint.length)} characters; at most ${count(HINT_MAX)}. Shorten it.`;
  }
  return problems;
}

const count = (n: number) => n.toLocaleString('en');

/**
 * The description and trigger hint, as the new-listing and edit forms both ask for them, each with
 * a live count against its limit: nothing typed or pasted is cut off. `idPrefix` keeps ids unique
 * when both forms could share a page.
 */
export function ListingWordsFields(props: {
  idPrefix: string;
  description: string;
  hint: string;
  descriptionHelp: string;
  onDescription: (value: string) => void;
  onHint: (value: string) => void;
  form: FormErrors;
}) {
  const { form } = props;
  const description = `${props.idPrefix}description`;
  const hint = `${props.idPrefix}hint`;
  return (
    <>
      <label for={description}>Description</label>
      <textarea
        id={description}
        rows={4}
        {...form.inputProps(description, `${description}-help ${description}-count`)}
        value={props.description}
        onInput={(e) => {
          form.edited(description);
          props.onDescription(e.currentTarget.value);
        }}
      />
      <FieldError form={form} id={description} />
      <Counter id={`${description}-count`} length={props.description.length} max={DESCRIPTION_MAX} />
      <p id={`${description}-help`} class="muted small">
        {props.descriptionHelp}
      </p>
      <label for={hint}>When should an agent use it?</label>
      <input
        id={hint}
        {...form.inputProps(hint, `${hint}-help ${hint}-count`)}
        value={props.hint}
        onInput={(e) => {
          form.edited(hint);
          props.onHint(e.currentTarget.value);
        }}
      />
      <FieldError form={form} id={hint} />
      <Counter id={`${hint}-count`} length={props.hint.length} max={HINT_MAX} />
      <p id={`${hint}-help`} class="muted small">
        One sentence an agent matches its task against. Needed before publishing.
      </p>
    </>
  );
}

function Counter({ id, length, max }: { id: string; length: number; max: number }) {
  return (
    <p
      id={id}
      class={`counter small ${length > max ? 'bad' : 'muted'}`}
      aria-live={length > max ? 'polite' : 'off'}
    >
      {count(length)} / {count(max)} characters{length > max ? `: ${count(length - max)} too many` : ''}
    </p>
  );
}
