/**
 * The Zod type provider emits every registered schema twice (an output `X` and an input `XInput`),
 * whether a route uses it or not. Keep only the component schemas the document references, so the
 * published description lists what the API actually exchanges.
 */
export function pruneUnreferencedSchemas<T extends { components?: { schemas?: Record<string, object> } }>(
  doc: T,
): T {
  const schemas = doc.components?.schemas;
  if (!schemas) return doc;
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const name = value.slice('#/components/schemas/'.length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else {
        visit(value);
      }
    }
  };
  visit({ ...doc, components: { ...doc.components, schemas: {} } });
  return {
    ...doc,
    components: {
      ...doc.components,
      schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))),
    },
  };
}
