-- Whether a value read from Redis is a name fitq accepts for a run id or a
-- worker name: letters, digits, '.', '_' and '-', starting with a letter or
-- digit, at most MAX_NAME_LENGTH characters: NAME_PATTERN and
-- MAX_NAME_LENGTH of src/model/names.ts (a test checks the two agree). A key
-- built from anything else could name another kind of key (`t7:output`, a
-- stream) or leave the namespace.
local MAX_NAME_LENGTH = 128
local function validName(value)
  return type(value) == "string" and #value <= MAX_NAME_LENGTH and
    string.find(value, "^[A-Za-z0-9][A-Za-z0-9_.%-]*$") ~= nil
end
