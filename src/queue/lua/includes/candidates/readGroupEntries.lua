-- @include fairshare/fairPlace
-- @include fairshare/lazyFairKeys
-- @include bullmq/priorityBand
-- @include shape/shapeUser
-- @include namespace/tryCall

-- Shapes of a group read at once.
local CHUNK = 16
-- With fair share on, the shapes of a priority band read at once, at most
-- (users x their demand shapes; a band with more is ordered fairly in
-- reads of this many).
local FAIR_BAND_MOST = 512
-- Past every place fairPlace gives (a user's rank below 2^20, times 2^32,
-- plus a staging order below 2^32), and exact in a double with any
-- position of a read added.
local NO_PLACE = 6755399441055744

-- Reads the next shapes of a group a claim walks (candidateStream) into
-- g.entries (shape, score, flat), with each shape's place in the claim's
-- order in g.keys (fairshare/fairKey, by position; nil when scores are
-- the keys), and moves g.offset
-- past them; sets g.exhausted once the group has no more. Scores order a
-- group; with fair share on (the stream's order `fair`) a read takes a
-- whole priority band and sorts it by key, so that within the band the
-- user who needs it most comes first, unless the group holds one user's
-- shapes only (`group-users:<names>`, shape/indexShape; read once per
-- claim, g.users; a group without it, indexed by an older fitq, is
-- sorted). Returns false when the group's key holds no sorted set.
local function readGroupEntries(g, fair)
  -- A group of one user's shapes is in the claim's order already: read as without fair share.
  if fair.on and g.users == nil then g.users = tonumber(tryCall("HLEN", KEY.groupUsers(fair.base, g.group))) or 0 end
  local sorting = fair.on and g.users ~= 1
  local size = sorting and 64 or CHUNK
  local entries = tryCall("ZRANGE", g.key, g.offset, g.offset + size - 1, "WITHSCORES")
  if not entries then return false end
  g.pos = 1
  if fair.on and not sorting then
    g.entries, g.keys, g.exhausted = entries, lazyFairKeys(fair, entries), #entries < 2 * size
    g.offset = g.offset + size
    return true
  end
  if not sorting then
    -- (Keys are scores: g.keys stays nil.)
    g.entries, g.keys, g.exhausted = entries, nil, #entries < 2 * size
    g.offset = g.offset + size
    return true
  end
  local kept = #entries
  if #entries > 0 then
    -- The whole band of the first entry, no more.
    local band = priorityBand(tonumber(entries[2]) or -math.huge)
    local read = #entries
    while read == 2 * size and #entries < 2 * FAIR_BAND_MOST and priorityBand(tonumber(entries[#entries]) or -math.huge) == band do
      local more = tryCall("ZRANGE", g.key, g.offset + #entries / 2, g.offset + #entries / 2 + size - 1, "WITHSCORES") or {}
      read = #more
      for _, item in ipairs(more) do entries[#entries + 1] = item end
    end
    kept = 0
    while kept < #entries and priorityBand(tonumber(entries[kept + 2]) or -math.huge) == band do
      kept = kept + 2
    end
    g.exhausted = kept == #entries and read < 2 * size
  else
    g.exhausted = true
  end
  -- One band: sorted by place (its user's rank, then its age), plain
  -- numbers sorted as such (no comparator: the cheapest sort), each unique
  -- in the band; keys are made only for what the claim looks at.
  local places, at = {}, {}
  for i = 1, kept, 2 do
    local _, user = shapeUser(entries[i])
    local place = fairPlace(fair, tonumber(entries[i + 1]) or -math.huge, user)
    -- (A score that is no band's, written by hand: after every place, in read order.)
    if place == math.huge then place = NO_PLACE + i end
    places[#places + 1] = place
    at[place] = i
  end
  table.sort(places)
  g.entries = {}
  for _, place in ipairs(places) do
    g.entries[#g.entries + 1] = entries[at[place]]
    g.entries[#g.entries + 1] = entries[at[place] + 1]
  end
  g.keys = lazyFairKeys(fair, g.entries)
  g.offset = g.offset + kept / 2
  return true
end
