-- Run once by the postgres image when it creates its database.
CREATE EXTENSION genroc;
