-- The array a cause stands for (see arrayCause), or nil for a run id.
local function causeArray(cause)
  return string.match(cause, "^array:(.+)$")
end
