namespace lbb {}
