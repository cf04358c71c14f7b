Toda persona tiene derecho a la libertad de pensamiento.
Toda persona tiene derecho al trabajo.
Toda persona tiene derecho a la educación.
