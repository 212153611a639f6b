-- Areas of the latest topic map, largest first, with their label terms.
SELECT area_id, label, size, terms FROM areas ORDER BY size DESC, area_id
