// Plans kept across statements on the embedded database. The driver sends every statement as an
// unnamed Parse, so PGlite plans it again each time: in WebAssembly that is most of a statement's cost
// (the credential lookup: 1.1 ms a statement planned each time, 0.26 ms prepared once; docs/benchmarks.md,
// turn). The socket (pglite-wire.mjs) hands each batch here first: an unnamed Parse becomes a named
// statement of the one session, prepared once per text and bound by name after, and the driver is
// answered as if nothing had changed (a ParseComplete where a Parse was left out). At most `limit`
// statements are kept; the least recently used is closed once the session is idle.
//
// Only batches of the driver's shape are changed: at most one Parse, unnamed, first. Anything else
// (a simple Query, several Parses, a named one, a Close of the unnamed statement) goes as it came.

const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const DESCRIBE = 0x44; // 'D'
const CLOSE = 0x43; // 'C'
const QUERY = 0x51; // 'Q'
const STATEMENT = 0x53; // 'S' (a Describe or Close of a statement)
const PARSE_COMPLETE = Buffer.from([0x31, 0, 0, 0, 4]);
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const ERROR = 0x45; // 'E'
/** Statements longer than this are not kept (a large insert's text would pin its size in memory). */
const MAX_TEXT = 8192;

/**
 * The messages of a batch, each as [type, start, end] (end exclusive). A batch always holds whole
 * messages (the socket splits them so).
 * @param {Buffer} batch
 * @returns {Array<[number, number, number]>}
 */
function messagesOf(batch) {
  /** @type {Array<[number, number, number]>} */
  const messages = [];
  for (let at = 0; at < batch.length;) {
    const end = at + 1 + batch.readInt32BE(at + 1);
    messages.push([batch[at], at, end]);
    at = end;
  }
  return messages;
}

/**
 * The code field of the first ErrorResponse in an answer ('C' and the SQLSTATE), or null.
 * @param {Buffer} answer
 */
function errorCode(answer) {
  for (let at = 0; at + 5 <= answer.length; at += 1 + answer.readInt32BE(at + 1)) {
    if (answer[at] !== ERROR) continue;
    const end = at + 1 + answer.readInt32BE(at + 1);
    for (let field = at + 5; field < end && answer[field] !== 0;) {
      const stop = answer.indexOf(0, field);
      if (answer[field] === 0x43) return answer.toString('latin1', field, stop);
      field = stop + 1;
    }
    return null;
  }
  return null;
}

/** A message of `type` with `body`. @param {number} type @param {Buffer} body */
function message(type, body) {
  const head = Buffer.alloc(5);
  head[0] = type;
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/**
 * @param {number} [limit] how many statements to keep prepared
 */
export function statementCache(limit = 200) {
  /** Parse text and parameter types (latin1) → the statement's name; in least recently used order. @type {Map<string, string>} */
  const prepared = new Map();
  /** Names to close once the session is idle. @type {string[]} */
  const evicted = [];
  let counter = 0;

  return {
    /** How many statements are prepared. */
    get size() {
      return prepared.size;
    },

    /**
     * The batch to send in place of `batch` from a connection whose unnamed statement stands for
     * `unnamed` (a name, or null: the session's own unnamed statement), with what to do with its answer.
     * @param {Buffer} batch
     * @param {string | null} unnamed
     * @returns {{ bytes: Buffer, unnamed: string | null, answered: (answer: Buffer) => Buffer }}
     */
    rewrite(batch, unnamed) {
      const asIs = (next = unnamed) => ({ bytes: batch, unnamed: next, answered: (/** @type {Buffer} */ answer) => answer });
      if (batch.length === 0 || batch[0] === 0) return asIs(); // the startup packet
      const messages = messagesOf(batch);
      const parses = messages.filter(([type]) => type === PARSE);
      const closesUnnamed = messages.some(([type, start]) => type === CLOSE && batch[start + 5] === STATEMENT && batch[start + 6] === 0);
      if (messages.some(([type]) => type === QUERY) || closesUnnamed || parses.length > 1) return asIs(null);
      /** @type {string | null} */
      let name = unnamed;
      /** @type {{ key: string, name: string } | null} */
      let preparing = null;
      let hit = false;
      /** The kept statement's key, on a hit. @type {string | null} */
      let keyOf = null;
      const parts = [];
      for (const [type, start, end] of messages) {
        if (type === PARSE) {
          // name\0 text\0 int16 count, int32 types: the name must be empty and the Parse first.
          if (batch[start + 5] !== 0 || start !== 0 || end - start > MAX_TEXT) return asIs(batch[start + 5] === 0 ? null : unnamed);
          const key = batch.toString('latin1', start + 6, end);
          const kept = prepared.get(key);
          if (kept !== undefined) {
            prepared.delete(key);
            prepared.set(key, kept);
            name = kept;
            hit = true;
            keyOf = key;
            continue; // left out: answered with a ParseComplete below
          }
          name = `console_plan_${++counter}`;
          preparing = { key, name };
          parts.push(message(PARSE, Buffer.concat([Buffer.from(`${name}\0`), batch.subarray(start + 6, end)])));
        } else if (type === BIND && batch[start + 5] === 0 && batch[start + 6] === 0 && name !== null) {
          // portal '' and statement '': bound by the statement's name
          parts.push(message(BIND, Buffer.concat([Buffer.from(`\0${name}\0`), batch.subarray(start + 7, end)])));
        } else if (type === DESCRIBE && batch[start + 5] === STATEMENT && batch[start + 6] === 0 && name !== null) {
          parts.push(message(DESCRIBE, Buffer.from(`S${name}\0`)));
        } else {
          parts.push(batch.subarray(start, end));
        }
      }
      return {
        bytes: Buffer.concat(parts),
        unnamed: name,
        answered: (answer) => {
          if (preparing !== null && answer[0] === PARSE_COMPLETE[0]) {
            prepared.set(preparing.key, preparing.name);
            if (prepared.size > limit) {
              const [oldest, oldestName] = prepared.entries().next().value;
              prepared.delete(oldest);
              evicted.push(oldestName);
            }
          }
          if (!hit) return answer;
          // A kept statement the session lost (a client's own DEALLOCATE: 26000) or can no longer run as
          // planned (a table's columns changed under it: 0A000) is let go of, and prepared anew next time.
          const code = errorCode(answer);
          if ((code === 'C26000' || code === 'C0A000') && keyOf !== null && prepared.get(keyOf) === name) {
            prepared.delete(keyOf);
            if (code === 'C0A000') evicted.push(name);
          }
          return Buffer.concat([PARSE_COMPLETE, answer]);
        },
      };
    },

    /**
     * What closes the statements let go of, to be run when the session is idle (its answer is
     * discarded), or null when there is none.
     * @returns {Buffer | null}
     */
    closing() {
      if (evicted.length === 0) return null;
      const names = evicted.splice(0);
      return Buffer.concat([...names.map((n) => message(CLOSE, Buffer.from(`S${n}\0`))), SYNC]);
    },

    /** Forgets every statement (after the session lost them). */
    clear() {
      prepared.clear();
      evicted.length = 0;
    },
  };
}
