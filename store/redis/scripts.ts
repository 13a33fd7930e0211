/**
 * The Lua scripts of the Redis store. Each change to a channel is one script, so it is
 * atomic: no other client sees it half done, and its limits are checked inside it
 * (a full queue is refused, never trimmed).
 *
 * Every channel script takes the channel's four keys (./keys.ts: meta, ui, agent,
 * state; one hash slot) and, first in ARGV, the channel TTL and how often a read marks
 * the channel as used. They carry the `#!lua` shebang (Redis 7): Redis then refuses a
 * script that would write while it is out of memory or cannot persist, before it runs,
 * rather than in the middle. Scripts that only read or free memory (polls, which
 * acknowledge by deleting; removal; the sweep) are flagged `allow-oom`, so that a Redis
 * full to its maxmemory still serves them (docs/ARCHITECTURE.md, "The Redis store"): reading
 * and acknowledging is how room is made. Such a script must never grow Redis but by a
 * bounded few bytes: it creates no key, and sets only fields that already exist, but for
 * a meta hash rebuilt after its fields were lost (a few bytes once) and a queue's readers'
 * records (at most MAX_READERS short records, ../readers.ts).
 *
 * Invariants the scripts keep:
 * - `seq:<queue>` in the meta hash is the last seq handed out; it only grows, so a seq
 *   never repeats while the channel exists; stream entry ids are `<seq>-0`, dense;
 * - `bytes:<queue>` is the size of the queue's messages as every store defines it (the
 *   bytes of each message's JSON, store/validate.ts `messageBytes`), so both stores refuse
 *   the same message;
 * - a cursor above the last seq handed out moves nothing (no seq, no acknowledgement);
 * - a cursor deletes only what every reader seen within the lease acknowledged
 *   (../readers.ts): the read script keeps the readers' records and trims in one step;
 * - a channel's keys expire (after the TTL) only while both its queues are empty: a
 *   channel holding an unread message is never dropped by Redis or by the sweep;
 * - `epoch:<queue>` (protocol/epoch.ts) is minted, from the caller's candidate, by the
 *   append that starts a queue from nothing (no seq recorded, no stream): Redis
 *   restarted empty, the channel expired or removed. A meta hash rebuilt from its stream
 *   has none (NO_EPOCH), which readers also see as a new epoch. A cursor of another
 *   epoch than the queue's moves nothing;
 * - every change to a queue publishes on its wake channel, after the change, and a
 *   publish Redis refuses (an ACL user without the channel's rights) never fails a
 *   script that has written: {@link wake} swallows it, and the reply says so, so that a
 *   write is never reported refused once it is made and a read never fails after it
 *   deleted what it would have returned.
 *
 * Seqs, cursors and counts are returned as decimal text: node-redis decodes integer
 * replies with a float sum that is off near 2^53 (the largest cursor a caller may pass).
 */
import { type CommandParser, defineScript } from "@redis/client";

/** The first line of a script that may write: Redis refuses it, unrun, when out of memory. */
const WRITES = "#!lua";
/** The first line of a script that only reads or frees memory: Redis runs it when out of memory too. */
const FREES = "#!lua flags=allow-oom";
/** The first line of a script that only reads: Redis refuses any write in it, and runs it when out of memory too. */
const READS = "#!lua flags=no-writes";

/** What every channel script has after its first line: its helpers. */
const CHANNEL_PRELUDE = `
local function num(value) return tonumber(value) or 0 end

-- '1' while every wake-up of this script was published, '0' once Redis refused one.
local woke = '1'

-- Says on a sharded pub/sub channel that something changed. Redis does not undo a
-- script's writes when it fails, so a refused publish (an ACL user without the
-- channel's rights) must not fail it: it is swallowed and the reply says so.
local function wake(channel, what)
  local reply = redis.pcall('SPUBLISH', channel, what)
  if type(reply) == 'table' and reply.err then woke = '0' end
end

-- The epoch of a queue (protocol/epoch.ts); '' (NO_EPOCH) when none is recorded.
local function epoch_of(queue)
  return redis.call('HGET', KEYS[1], 'epoch:' .. queue) or ''
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function seq_of(id) return tonumber(string.match(id, '^(%d+)')) end

local function stream_of(queue)
  if queue == 'ui' then return KEYS[2] end
  if queue == 'agent' then return KEYS[3] end
  return error('unknown queue ' .. tostring(queue))
end

-- The bytes of a message's JSON {"seq":…,"event":"…","data":…,"ts":"…"}: 35 bytes and
-- the fields (event and ts need no escaping; data is stored as its JSON text).
local function message_bytes(seq_text, event, data, ts)
  return 35 + #seq_text + #event + #data + #ts
end

-- The last seq handed out in a queue. A meta hash that lost its fields while the stream
-- stayed (a key evicted or deleted by hand) is rebuilt from the stream, so that no seq repeats.
local function last_seq(queue, stream)
  local known = redis.call('HGET', KEYS[1], 'seq:' .. queue)
  if known then return tonumber(known) end
  if redis.call('EXISTS', stream) == 0 then return 0 end
  local info = redis.call('XINFO', 'STREAM', stream)
  local last = 0
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then last = seq_of(info[i + 1]) end
  end
  local bytes = 0
  for _, entry in ipairs(redis.call('XRANGE', stream, '-', '+')) do
    local f = entry[2]
    bytes = bytes + message_bytes(string.match(entry[1], '^(%d+)'), f[2], f[4], f[6])
  end
  redis.call('HSET', KEYS[1], 'seq:' .. queue, string.format('%d', last), 'bytes:' .. queue, bytes)
  return last
end

-- Marks the channel as used now (a change always; a read at most every ARGV[2] ms), and
-- makes its keys expire after ARGV[1] ms once both queues are empty, never while one
-- holds a message. 'holds' is true when the caller knows a queue holds one (an append).
-- A read that changed nothing creates nothing: a channel never written keeps no key.
local function settle(changed, holds)
  local now = now_ms()
  if not changed then
    local touched = redis.call('HGET', KEYS[1], 'touched')
    if touched then
      if now - tonumber(touched) < tonumber(ARGV[2]) then return end
    elseif redis.call('EXISTS', KEYS[1]) == 0 then
      return
    end
  end
  redis.call('HSET', KEYS[1], 'touched', now)
  if holds or redis.call('XLEN', KEYS[2]) + redis.call('XLEN', KEYS[3]) > 0 then
    -- Keys with an expiry all got it together: the meta key tells for the four.
    if redis.call('PTTL', KEYS[1]) >= 0 then
      for i = 1, 4 do redis.call('PERSIST', KEYS[i]) end
    end
  else
    for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
  end
end

-- Up to max_bytes of messages from stream id 'from' on (always at least one), flattened as
-- seq, event, data, ts, …; with their count, the last seq and their bytes.
local function take_batch(stream, from, max_bytes)
  local out, count, total, last = {}, 0, 0, 0
  while true do
    local entries = redis.call('XRANGE', stream, from, '+', 'COUNT', 100)
    for _, entry in ipairs(entries) do
      local f = entry[2]
      local seq_text = string.match(entry[1], '^(%d+)')
      local bytes = total + message_bytes(seq_text, f[2], f[4], f[6])
      if count > 0 and bytes > max_bytes then return out, count, last, total end
      total = bytes
      count = count + 1
      last = tonumber(seq_text)
      out[#out + 1] = seq_text
      out[#out + 1] = f[2]
      out[#out + 1] = f[4]
      out[#out + 1] = f[6]
    end
    if #entries < 100 then return out, count, last, total end
    from = '(' .. entries[#entries][1]
  end
end

-- Deletes every message up to seq 'upto', whose bytes add up to 'bytes'.
local function forget(queue, stream, upto, bytes)
  redis.call('XTRIM', stream, 'MINID', string.format('%d-0', upto + 1))
  redis.call('HINCRBY', KEYS[1], 'bytes:' .. queue, -bytes)
end

-- The count and bytes of the messages up to seq 'upto'.
local function bytes_upto(stream, upto)
  local bytes = 0
  local entries = redis.call('XRANGE', stream, '-', string.format('%d-0', upto))
  for _, entry in ipairs(entries) do
    local f = entry[2]
    bytes = bytes + message_bytes(string.match(entry[1], '^(%d+)'), f[2], f[4], f[6])
  end
  return #entries, bytes
end
`;

/**
 * Appends a message. ARGV: ttl, touch, queue, event, data (JSON), ts, max messages,
 * max bytes, wake channel, epoch to mint if the queue starts from nothing.
 * Returns `{"ok", seq, pending, epoch, woke}` or `{"full", "messages" | "bytes"}` (nothing changed).
 */
const APPEND_LUA = `${WRITES}${CHANNEL_PRELUDE}
local queue, event, data, ts = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local stream = stream_of(queue)
local count = redis.call('XLEN', stream)
if count >= tonumber(ARGV[7]) then return {'full', 'messages'} end
local fresh = redis.call('HEXISTS', KEYS[1], 'seq:' .. queue) == 0 and redis.call('EXISTS', stream) == 0
local seq_text = string.format('%d', last_seq(queue, stream) + 1)
local bytes = num(redis.call('HGET', KEYS[1], 'bytes:' .. queue)) + message_bytes(seq_text, event, data, ts)
if bytes > tonumber(ARGV[8]) then return {'full', 'bytes'} end
redis.call('XADD', stream, seq_text .. '-0', 'event', event, 'data', data, 'ts', ts)
redis.call('HSET', KEYS[1], 'seq:' .. queue, seq_text, 'bytes:' .. queue, bytes)
if fresh then redis.call('HSET', KEYS[1], 'epoch:' .. queue, ARGV[10]) end
settle(true, true)
wake(ARGV[9], seq_text)
return {'ok', seq_text, string.format('%d', count + 1), epoch_of(queue), woke}
`;

/**
 * Reads with a cursor: records the reader's cursor (../readers.ts, the same rules), deletes
 * every message at or below the cursors of all readers seen within the lease, then returns
 * a batch of those after the cursor. A cursor that names no seq of the queue (above the
 * last seq handed out: a queue emptied under its reader, or a made-up cursor; or of
 * another epoch than the queue's) acknowledges nothing: the reader is recorded as holding
 * everything queued, and gets the queue from its start with the cursor to go on with.
 * The readers' records are one field of the meta hash, `readers:<queue>`,
 * `<id>,<seq>,<seen>;…`, written once the channel exists (its meta hash or its state). ARGV: ttl, touch, queue, after,
 * max batch bytes, wake channel, the cursor's epoch ('*': none given, the cursor is taken
 * as it is), reader id, '1' when the caller named its reader, the lease, the renewal
 * interval, the most readers kept, the caller's clock shift (ms added to Redis's).
 * Returns `{cursor, pending, epoch, woke, missed, seq, event, data, ts, …}`.
 */
const READ_AFTER_LUA = `${FREES}${CHANNEL_PRELUDE}
local queue, after, given, reader = ARGV[3], tonumber(ARGV[4]), ARGV[7], ARGV[8]
local lease, renew, most = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local stream = stream_of(queue)
local last_handed_out = last_seq(queue, stream)
local epoch = epoch_of(queue)
local void = after > last_handed_out or (given ~= '*' and given ~= epoch)
local at = after
if void then at = 0 end
-- The highest seq no longer kept below the first message.
local floor = last_handed_out
local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)
if #first > 0 then floor = seq_of(first[1][1]) - 1 end
local now = now_ms() + tonumber(ARGV[13])
local field = 'readers:' .. queue
local others, own, dropped = {}, nil, false
for id, seq, seen in string.gmatch(redis.call('HGET', KEYS[1], field) or '', '([^,;]+),(%d+),(-?%d+)') do
  seq, seen = tonumber(seq), tonumber(seen)
  if id == reader then own = {seq, seen}
  elseif now - seen < lease then others[#others + 1] = {id, seq, seen}
  else dropped = true end
end
local held = own ~= nil and now - own[2] < lease and own[1] <= at
local missed = '0'
if ARGV[9] == '1' and given ~= '*' and floor > at and not held then missed = '1' end
local mine = at
if void then mine = floor end
table.sort(others, function(a, b) return a[3] > b[3] end)
if #others > most - 1 then dropped = true end
local records, upto = {}, mine
for i = 1, math.min(#others, most - 1) do
  local other = others[i]
  records[#records + 1] = other[1] .. ',' .. string.format('%d', other[2]) .. ',' .. string.format('%d', other[3])
  if other[2] < upto then upto = other[2] end
end
records[#records + 1] = reader .. ',' .. string.format('%d', mine) .. ',' .. string.format('%d', now)
local stale = own == nil or own[1] ~= mine or now - own[2] >= renew or dropped
-- Recorded once the channel exists (written to, or its state documents), not by a read of a channel nobody made.
if stale and redis.call('EXISTS', KEYS[1], KEYS[4]) > 0 then redis.call('HSET', KEYS[1], field, table.concat(records, ';')) end
local changed = false
local from = string.format('%d-0', after + 1)
if void then
  from = '-'
elseif upto > 0 then
  local gone, bytes = bytes_upto(stream, upto)
  if gone > 0 then
    forget(queue, stream, upto, bytes)
    changed = true
  end
end
local out, count, last = take_batch(stream, from, tonumber(ARGV[5]))
-- A read that returns messages marks the channel used (a write), so that a WAIT after it
-- covers what it returned (./replicated.ts).
settle(changed or count > 0)
if changed then wake(ARGV[6], 'ack') end
local cursor = after
if void then cursor = last_handed_out end
if count > 0 then cursor = last end
local reply = {string.format('%d', cursor), string.format('%d', redis.call('XLEN', stream) - count), epoch, woke, missed}
for _, value in ipairs(out) do reply[#reply + 1] = value end
return reply
`;

/**
 * Reads and clears a batch, whatever readers hold (at-most-once). ARGV: ttl, touch,
 * queue, max batch bytes, wake channel. Returns `{cursor, pending, epoch, woke, '0',
 * seq, event, data, ts, …}` (the read script's shape); the cursor is the last seq handed
 * out when nothing was waiting.
 */
const DRAIN_LUA = `${FREES}${CHANNEL_PRELUDE}
local queue = ARGV[3]
local stream = stream_of(queue)
local out, count, last, bytes = take_batch(stream, '-', tonumber(ARGV[4]))
local cursor = last
if count > 0 then
  forget(queue, stream, last, bytes)
  settle(true)
  wake(ARGV[5], 'ack')
else
  cursor = last_seq(queue, stream)
  settle(false)
end
local reply = {string.format('%d', cursor), string.format('%d', redis.call('XLEN', stream)), epoch_of(queue), woke, '0'}
for _, value in ipairs(out) do reply[#reply + 1] = value end
return reply
`;

/**
 * What waits in a queue and its epoch, read at one instant, changing nothing (one script
 * rather than a transaction: a script is routed by its keys on a Redis Cluster).
 * ARGV: queue. Returns `{epoch, seq, event, data, ts, …}`.
 */
const SNAPSHOT_LUA = `${READS}${CHANNEL_PRELUDE}
local queue = ARGV[1]
local reply = {epoch_of(queue)}
for _, entry in ipairs(redis.call('XRANGE', stream_of(queue), '-', '+')) do
  local f = entry[2]
  reply[#reply + 1] = string.match(entry[1], '^(%d+)')
  reply[#reply + 1] = f[2]
  reply[#reply + 1] = f[4]
  reply[#reply + 1] = f[6]
end
return reply
`;

/**
 * Replaces a state document if its version is still the one read (compare and set).
 * ARGV: ttl, touch, name, expected version (0: never written), JSON. Returns 1, or 0
 * when another writer came first (nothing changed).
 */
const STATE_SET_LUA = `${WRITES}${CHANNEL_PRELUDE}
local name = ARGV[3]
local version = num(redis.call('HGET', KEYS[4], 'v:' .. name))
if version ~= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', KEYS[4], name, ARGV[5], 'v:' .. name, version + 1)
settle(true)
return 1
`;

/** Removes a channel. ARGV: ttl, touch, wake channel of ui, of agent. Returns 1 when it existed. */
const REMOVE_LUA = `${FREES}${CHANNEL_PRELUDE}
local existed = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
wake(ARGV[3], 'removed')
wake(ARGV[4], 'removed')
if existed > 0 then return 1 end
return 0
`;

/**
 * Removes a channel idle for longer than the TTL, by Redis's clock shifted by
 * ARGV[3] ms, unless a queue holds a message. ARGV: ttl, touch, shift, wake channel of
 * ui, of agent. Returns 1 when it was removed.
 */
const SWEEP_LUA = `${FREES}${CHANNEL_PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('XLEN', KEYS[2]) + redis.call('XLEN', KEYS[3]) > 0 then return 0 end
if now_ms() + tonumber(ARGV[3]) - num(redis.call('HGET', KEYS[1], 'touched')) <= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
wake(ARGV[4], 'removed')
wake(ARGV[5], 'removed')
return 1
`;

/** What session scripts start with. KEYS[1] is the session record; ARGV[1] the TTL. */
const SESSION_PRELUDE = `
local function num(value) return tonumber(value) or 0 end

-- As the channel scripts' wake: a refused publish never fails a script that has written.
local function wake(channel, what)
  redis.pcall('SPUBLISH', channel, what)
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * Replaces a session record if its version is still the one read. ARGV: ttl, expected
 * version, JSON, wake channel. Returns 1, or 0 when another writer came first.
 */
const SESSION_SET_LUA = `${WRITES}${SESSION_PRELUDE}
local version = num(redis.call('HGET', KEYS[1], 'v'))
if version ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'json', ARGV[3], 'v', version + 1, 'touched', now_ms())
redis.call('PEXPIRE', KEYS[1], ARGV[1])
wake(ARGV[4], 'changed')
return 1
`;

/** Removes a session record not written for longer than the TTL (Redis's clock shifted by ARGV[2] ms). Returns 1 when removed. */
const SESSION_SWEEP_LUA = `${FREES}${SESSION_PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if now_ms() + tonumber(ARGV[2]) - num(redis.call('HGET', KEYS[1], 'touched')) <= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/** The name of one of the store's scripts. */
export type ScriptName = keyof typeof SCRIPTS;

/**
 * Script `name` as a command on the wire (`EVALSHA <sha1> <key count> <keys…> <args…>`,
 * numbers as decimal text), with its source for a node that does not have it cached.
 * @throws Error when `keys` are not as many as the script takes.
 */
export function scriptCommand(name: ScriptName, keys: readonly string[], args: readonly (string | number)[]): { args: string[]; source: string } {
  const script = SCRIPTS[name];
  if (keys.length !== script.NUMBER_OF_KEYS) throw new Error(`${name} takes ${script.NUMBER_OF_KEYS} keys, not ${keys.length}`);
  return { args: ["EVALSHA", script.SHA1, String(keys.length), ...keys, ...args.map(String)], source: script.SCRIPT };
}

/** One script: its keys, then its arguments (numbers are sent as decimal text). */
function script(source: string, keyCount: number) {
  return defineScript({
    SCRIPT: source,
    NUMBER_OF_KEYS: keyCount,
    parseCommand(parser: CommandParser, keys: readonly string[], args: readonly (string | number)[]) {
      if (keys.length !== keyCount) throw new Error(`this script takes ${keyCount} keys, not ${keys.length}`);
      parser.pushKeys([...keys]);
      parser.push(...args.map(String));
    },
    transformReply: (reply: unknown): unknown => reply,
  });
}

/** The store's scripts, given to `createClient({ scripts })`; each is then a method of the client. */
export const SCRIPTS = {
  bcAppend: script(APPEND_LUA, 4),
  bcReadAfter: script(READ_AFTER_LUA, 4),
  bcDrain: script(DRAIN_LUA, 4),
  bcSnapshot: script(SNAPSHOT_LUA, 4),
  bcStateSet: script(STATE_SET_LUA, 4),
  bcRemove: script(REMOVE_LUA, 4),
  bcSweep: script(SWEEP_LUA, 4),
  bcSessionSet: script(SESSION_SET_LUA, 1),
  bcSessionSweep: script(SESSION_SWEEP_LUA, 1),
};
