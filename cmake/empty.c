/* empty.c — placeholder translation unit for a module folder that has no sources yet. */
typedef int o2c_empty_translation_unit;
