import * as CDX from '@cyclonedx/cyclonedx-library';
import { PackageURL } from 'packageurl-js';
import type { Dependency } from './dependencies.js';

const PURL_TYPE: Record<Dependency['ecosystem'], string> = {
  npm: 'npm',
  PyPI: 'pypi',
  'crates.io': 'cargo',
  Go: 'golang',
};

function purlOf(dep: Dependency): PackageURL {
  let namespace: string | undefined;
  let name = dep.name;
  if ((dep.ecosystem === 'npm' && name.startsWith('@')) || dep.ecosystem === 'Go') {
    const slash = name.lastIndexOf('/');
    if (slash > 0) {
      namespace = name.slice(0, slash);
      name = name.slice(slash + 1);
    }
  }
  return new PackageURL(
    PURL_TYPE[dep.ecosystem],
    namespace,
    name,
    dep.version ?? undefined,
    undefined,
    undefined,
  );
}

/** A CycloneDX 1.5 JSON SBOM of the release's dependencies; deterministic for the same input. */
export function buildSbom(input: {
  channel: string;
  version: string;
  publishedAt: Date;
  dependencies: Dependency[];
  toolVersion: string;
}): string {
  const bom = new CDX.Models.Bom();
  bom.metadata.timestamp = input.publishedAt;
  bom.metadata.tools.components.add(
    new CDX.Models.Component(CDX.Enums.ComponentType.Application, 'repo402-analyzer', {
      version: input.toolVersion,
    }),
  );
  bom.metadata.component = new CDX.Models.Component(CDX.Enums.ComponentType.Application, input.channel, {
    version: input.version,
    bomRef: `release:${input.channel}@${input.version}`,
  });
  const seen = new Set<string>();
  for (const dep of input.dependencies) {
    const purl = purlOf(dep).toString();
    if (seen.has(purl)) continue;
    seen.add(purl);
    const component = new CDX.Models.Component(CDX.Enums.ComponentType.Library, dep.name, {
      version: dep.version ?? undefined,
      purl,
      bomRef: purl,
      scope: dep.dev ? CDX.Enums.ComponentScope.Optional : CDX.Enums.ComponentScope.Required,
    });
    bom.components.add(component);
  }
  const serializer = new CDX.Serialize.JsonSerializer(
    new CDX.Serialize.JSON.Normalize.Factory(CDX.Spec.Spec1dot5),
  );
  return serializer.serialize(bom, { sortLists: true });
}
