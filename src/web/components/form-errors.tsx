import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText, type FormField, fieldErrors } from '../errors.js';

/**
 * A form's refusals where the person is looking: each field's reason beside its field (marked
 * `aria-invalid`, described by the reason), the rest in a notice beside the submit button, and focus
 * on the first field at fault, or else on the notice, so a screen reader and a sighted person land on
 * what to change. A field's reason goes as soon as it is edited.
 */
export interface FormErrors {
  /** Reasons by input id, in the form's order. */
  fields: Record<string, string>;
  /** What is not about one field: shown by `<FormNotice>`. */
  notice: unknown;
  /** A refusal of the service, or a check of the page's own: `fields` maps what the service names. */
  fail(error: unknown, fields?: Record<string, FormField>): void;
  /** The page's own checks, before anything is sent: reasons by input id, in the form's order. */
  invalid(reasons: Record<string, string>): void;
  clear(): void;
  /** Edited: its reason no longer applies. */
  edited(id: string): void;
  /** The attributes an input takes: invalid or not, and which texts describe it. */
  inputProps(id: string, help?: string): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string };
  noticeRef: { current: HTMLDivElement | null };
}

export function useFormErrors(): FormErrors {
  const [fields, setFields] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState<unknown>();
  const [attempt, setAttempt] = useState(0);
  const noticeRef = useRef<HTMLDivElement | null>(null);

  useEffect(() => {
    if (attempt === 0) return;
    const first = Object.keys(fields)[0];
    const target = first ? document.getElementById(first) : noticeRef.current;
    target?.focus();
  }, [attempt]);

  return {
    fields,
    notice,
    fail(error, map = {}) {
      const found = fieldErrors(error, map);
      setFields(found);
      // A refusal wholly about fields says so beside them; anything else is said in the notice too.
      setNotice(Object.keys(found).length > 0 && isOnlyFields(error) ? undefined : error);
      setAttempt((n) => n + 1);
    },
    invalid(reasons) {
      setFields(reasons);
      setNotice(undefined);
      setAttempt((n) => n + 1);
    },
    clear() {
      setFields({});
      setNotice(undefined);
    },
    edited(id) {
      if (!(id in fields)) return;
      // From the state as it is by then: several fields can be edited by one change.
      setFields((current) => {
        const { [id]: _, ...rest } = current;
        return rest;
      });
    },
    inputProps(id, help) {
      const invalid = id in fields;
      const describedBy = [help, invalid ? `${id}-error` : undefined].filter(Boolean).join(' ');
      return {
        ...(invalid ? { 'aria-invalid': 'true' as const } : {}),
        ...(describedBy ? { 'aria-describedby': describedBy } : {}),
      };
    },
    noticeRef,
  };
}

function isOnlyFields(error: unknown): boolean {
  const body = (error as { body?: { code?: string } })?.body;
  return body?.code === 'invalid_request';
}

/** A field's reason, beside it (its id is what `inputProps` points the field at). */
export function FieldError({ form, id }: { form: FormErrors; id: string }) {
  const reason = form.fields[id];
  if (!reason) return null;
  return (
    <p id={`${id}-error`} class="field-error">
      {reason}
    </p>
  );
}

/** What a refusal says that is not about one field: beside the submit button, in the page's words. */
export function FormNotice({ form }: { form: FormErrors }) {
  const { notice } = form;
  return (
    <div ref={form.noticeRef} tabIndex={-1} class="form-notice">
      {notice ? (
        <div class="notice bad" role="alert">
          {errorText(notice)}
        </div>
      ) : null}
    </div>
  );
}
