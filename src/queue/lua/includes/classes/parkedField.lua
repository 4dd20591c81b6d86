-- The field of `fit-class:<class>` counting the shapes of arrays at their
-- limit that claims took out of the class's fit indexes (unparkArray puts
-- them back): while there are some, the class's claims say their runs
-- wait. No group is named so (a group's name begins with a letter).
local function parkedField()
  return "#parked"
end
