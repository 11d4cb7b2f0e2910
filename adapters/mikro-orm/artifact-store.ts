import type { MikroORM } from '@mikro-orm/postgresql';
import type { Artifact, Installation } from '../../domain/model.ts';
import type { ArtifactStore } from '../../ports/artifact-store.ts';
import { iso, isUuid, runStatement } from './sql.ts';

type Row = Artifact & { i_id: string | null; i_owner: string; i_provider_name: string; i_server_url: string;
  i_headers: Record<string, string>; i_enabled: boolean; i_authorized: boolean };

/** Artifacts: an owned artifact with its installation is one statement; so is a ledger reference. */
export function mikroOrmArtifactStore(orm: MikroORM): ArtifactStore {
  return {
    async findOverview(userId, artifactId) {
      if (!isUuid(artifactId)) return null;
      const [row] = await runStatement<{ title: string; provider_name: string | null }>(orm, `
        select a.title, i.provider_name from artifacts a left join installations i on i.id = a.installation
        where a.id = ? and a.owner = ?`, [artifactId, userId]);
      return row ?? null;
    },

    async findOwned(userId, artifactId) {
      if (!isUuid(artifactId)) return null;
      const [row] = await runStatement<Row>(orm, `
        select a.id, a.owner, a.installation, a.resource_uri, a.title, a.tool, a.input, a.output,
          ${iso('a.created_at')} as created_at, i.id as i_id, i.owner as i_owner, i.provider_name as i_provider_name,
          i.server_url as i_server_url, i.headers as i_headers, i.enabled as i_enabled, i.authorized as i_authorized
        from artifacts a left join installations i on i.id = a.installation
        where a.id = ? and a.owner = ?`, [artifactId, userId]);
      if (row === undefined) return null;
      const { i_id, i_owner, i_provider_name, i_server_url, i_headers, i_enabled, i_authorized, ...artifact } = row;
      const installation: Installation | null = i_id === null ? null : {
        id: i_id, owner: i_owner, provider_name: i_provider_name, server_url: i_server_url, headers: i_headers,
        enabled: i_enabled, authorized: i_authorized,
      };
      return { artifact, installation };
    },

    async findReference(segments, messageId) {
      if (!isUuid(messageId) || segments.length === 0) return null;
      const visible: string[] = [];
      const params: unknown[] = [messageId];
      for (const segment of segments) {
        visible.push(segment.upTo === null ? 'thread_id = ?' : '(thread_id = ? and id <= ?)');
        params.push(segment.thread_id, ...(segment.upTo === null ? [] : [segment.upTo]));
      }
      const [row] = await runStatement<{ artifact_id: string | null }>(orm,
        `select artifact_id from messages where id = ? and (${visible.join(' or ')})`, params);
      return row?.artifact_id ?? null;
    },
  };
}
