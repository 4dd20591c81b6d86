-- Whether a candidate is a run that demands nothing (no resource of the
-- worker's nor of the pool) while this worker already runs as many such
-- runs as it takes (`view.maxBare`, 0 = no bound): capacity bounds every
-- other run, so this bounds these. Such runs are told apart by the
-- worker's records of its claims: nothing reserved, nothing pooled
-- (counted once per claim, and only when such a candidate comes up).
local function bareFull(view, candidate)
  if (view.maxBare or 0) <= 0 or #candidate.demand > 0 or #candidate.own > 0 then return false end
  if view.bareRunning == nil then
    local count = 0
    for _, text in ipairs(redis.call("HVALS", view.reservedKey)) do
      local ok, claim = pcall(cjson.decode, text)
      if ok and type(claim) == "table" and (claim.reserved or "") == "" and (claim.pooled or "") == "" then count = count + 1 end
    end
    view.bareRunning = count
  end
  return view.bareRunning >= view.maxBare
end
