"""Teacher copies, the student notebooks generated from them, and grading a class's notebooks.

A lesson's teacher copy (``teachers/NN_name.ipynb``) is the source; the student notebook
(``notebooks/NN_name.ipynb``) is generated from it, and a class's filled-in student notebooks are
graded against it:

- `coordinator_kit.teaching.student`: the student version of a teacher copy (solution blocks and
  solution cells out, everything else kept byte for byte), writing it and checking for drift;
- `coordinator_kit.teaching.exercises`: the exercises of a lesson, read from its teacher copy
  (each answer cell and the check cell after it), and running a check on an answer;
- `coordinator_kit.teaching.cells`: running a notebook cell in this process, as a kernel would
  show it, with the notebook's imports only;
- `coordinator_kit.teaching.kernel`: running a student's notebook in a fresh kernel and reading
  its answers back;
- `coordinator_kit.teaching.grade`: the class folder, one CSV row per student and exercise;
- `coordinator_kit.teaching.cli`: ``python -m coordinator_kit notebooks`` and ``... grade``.

``teachers/README.md`` explains the conventions for teachers. This package imports nothing on
its own; the lesson modules a notebook imports are loaded when its cells are run.
"""
