/** Name and place lists the domain worlds draw from. */

/** Given names. */
export const FIRST_NAMES = [
  'Emma', 'Liam', 'Olivia', 'Noah', 'Ava', 'Ethan', 'Sofia', 'Mason', 'Isabella', 'Lucas',
  'Mia', 'Aiden', 'Amelia', 'Yusuf', 'Harper', 'Mei', 'Daniel', 'Aisha', 'Mateo', 'Chloe',
  'Ravi', 'Grace', 'Omar', 'Lena', 'Kenji', 'Zoe', 'Ivan', 'Nora', 'Diego', 'Priya',
  'Samuel', 'Hana', 'Leo', 'Fatima', 'Elijah', 'Julia', 'Arjun', 'Clara', 'Tomas', 'Sara',
] as const;

/** Family names. */
export const LAST_NAMES = [
  'Kim', 'Garcia', 'Smith', 'Nguyen', 'Patel', 'Johnson', 'Lopez', 'Brown', 'Silva', 'Khan',
  'Wilson', 'Martin', 'Chen', 'Rossi', 'Davis', 'Ito', 'Moore', 'Ahmed', 'Taylor', 'Novak',
  'Anderson', 'Thomas', 'Lee', 'Walker', 'Young', 'Hernandez', 'Wright', 'Scott', 'Green', 'Baker',
  'Adams', 'Nelson', 'Hill', 'Campbell', 'Mitchell', 'Roberts', 'Carter', 'Phillips', 'Evans', 'Turner',
] as const;

/** Cities with their state and a zip prefix. */
export const CITIES = [
  ['Austin', 'TX', '787'], ['Seattle', 'WA', '981'], ['Denver', 'CO', '802'], ['Boston', 'MA', '021'],
  ['Chicago', 'IL', '606'], ['Portland', 'OR', '972'], ['Phoenix', 'AZ', '850'], ['Atlanta', 'GA', '303'],
  ['Columbus', 'OH', '432'], ['San Diego', 'CA', '921'], ['Nashville', 'TN', '372'], ['Madison', 'WI', '537'],
  ['Raleigh', 'NC', '276'], ['Pittsburgh', 'PA', '152'], ['Minneapolis', 'MN', '554'], ['Charlotte', 'NC', '282'],
  ['Houston', 'TX', '770'], ['New York', 'NY', '100'], ['Philadelphia', 'PA', '191'], ['San Jose', 'CA', '951'],
] as const;

/** Street names. */
export const STREETS = [
  'Maple Street', 'Oak Avenue', 'Cedar Lane', 'Pine Road', 'Elm Street', 'Lakeview Drive', 'Hillcrest Road',
  'River Road', 'Park Avenue', 'Sunset Boulevard', 'Washington Street', 'Highland Avenue', 'Willow Way',
  'Chestnut Street', 'Spring Street', 'Meadow Lane', 'Church Street', 'Forest Drive', 'Main Street', 'Broadway',
  'Lincoln Avenue', 'Jackson Street', 'Ridge Road', 'Valley View Road', 'Harbor Drive', 'Orchard Lane',
] as const;
